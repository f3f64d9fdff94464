FR = {}
FR["title"] = """# Chapitre 10 — Projet final : bingo des statuts et garde mise en défaut

**Durée :** environ 75 minutes (40 pour le bingo, 35 pour la garde).

**Prérequis :** les chapitres 1 à 9, surtout le chapitre 3 (scripter un modèle), le 4 (l'ordre de la
garde), le 5 (les signatures), le 6 (les budgets et le délai), le 7 (les statuts) et le 8 (plusieurs
threads, une seule garde) ; les classes Python et les blocs `with`.

Jusqu'ici, vous avez observé chaque règle de l'extérieur. C'est maintenant à vous d'écrire les modèles
et la garde : huit modèles scriptés, un pour chaque façon dont une exécution peut se terminer, puis
votre propre garde, après deux gardes volontairement fausses. Un vérificateur exécute votre travail
et répond ligne par ligne : juste, ou bien ce qui s'est passé à la place et quelle règle en décide.

**Ce que vous saurez faire**

- provoquer volontairement chacun des huit statuts, à partir d'un script, des capacités que l'hôte
  accorde et de ses limites ;
- nommer la règle qui décide de chaque statut, et celle qui l'emporte quand deux le pourraient ;
- écrire une garde qui vérifie et réserve en une seule étape, sous verrou, avant le corps ;
- lire, pas à pas, l'ordonnancement par lequel un vérificateur met une garde en défaut."""
FR["bingo-rules"] = """## Partie 1 — Bingo des statuts

La grille a une case par statut. Remplissez chaque case avec un `ScriptedModel` dont l'exécution se
termine par ce statut, avec **les deux** agents. La tâche est celle du chapitre 3 : le modèle doit
appeler `read_ticket(42)`, puis `finish_review(42)`.

`ScriptedModel(steps, grant=..., limits=...)` prend :

- `steps` : une étape par appel modèle, comme au chapitre 3 — une `str` ou `Say(...)` (du texte,
  sans appel d'outil), `Call(tool, arguments)` ou une liste de `Call` (une seule réponse qui en
  demande plusieurs), `Hang()` (un appel qui ne répond jamais) ou `Fail(error)` (un appel qui lève
  une exception) ;
- `grant` : les capacités que l'hôte accorde, les deux par défaut (`{"ticket.read", "review.finish"}`) ;
- `limits` : les limites que vous modifiez, sous forme de dict, par exemple `{"tool_calls": 2}`. Une
  case part de 6 appels modèle, 4 tentatives d'outil, 1 tentative par signature et un délai de
  0,5 s ; elle peut les resserrer, jamais les desserrer.

Écrivez une case par cellule, puis lancez la vérification. N'ouvrez un indice que si vous êtes
bloqué."""
FR["square-Completed#hint"] = """Completed est une condition hôte, pas ce que dit le modèle : quel outil doit réussir, et que doit-il s'être passé avant lui ?"""
FR["square-Incomplete#hint"] = """La boucle se termine quand une réponse ne demande aucun outil. Qu'est-ce qui doit encore être faux à ce moment-là ?"""
FR["square-PermissionDenied#hint"] = """Voir un outil, ce n'est pas avoir le droit de l'exécuter : que peut refuser l'hôte avec `grant=` ?"""
FR["square-RepeatedCall#hint"] = """La règle de répétition compare des signatures : le nom de l'outil plus ses arguments canoniques (chapitre 5) ; une signature a droit à une tentative."""
FR["square-ToolBudget#hint"] = """Le budget d'outils compte chaque tentative admise, quel que soit l'outil ; faites en sorte que la règle de répétition n'ait jamais l'occasion de se déclencher la première."""
FR["square-ModelBudget#hint"] = """Chaque appel modèle compte, y compris ceux qui suivent les résultats d'outil : combien en faut-il à une revue qui se déroule bien ?"""
FR["square-DeadlineExceeded#hint"] = """Un seul délai borne toute l'exécution, appels modèle compris : quelle étape serait encore en attente au moment où il expire ?"""
FR["square-ProviderUnavailable#hint"] = """Aucune règle de l'hôte n'en décide : c'est une défaillance externe que l'hôte traduit en statut. Quelle exception signifie que le point d'accès est injoignable ?"""
FR["bingo-read"] = """Chaque ligne a exécuté sa case deux fois, une fois par agent, et montre les compteurs face aux
limites propres à la case ; « most attempts of one signature » est le plus grand nombre de tentatives
admises qui partageaient une même signature (nom de l'outil plus arguments canoniques), face à la
limite `repetitions`. Les agents ne sont jamais en désaccord : ce sont les règles de l'hôte qui
décident, pas la boucle qui les entoure. Et le modèle compte moins qu'il n'y paraît : le modèle poli
du chapitre 3 (lire, terminer, le dire) peut remplir six des huit cases sans autre changement qu'une
capacité accordée ou une limite. Quelles sont les deux qu'il ne peut pas remplir ? (Question 2.)

## Partie 2 — Mettre la garde en défaut

La garde de labkit (chapitre 4) pose ses questions sous un seul verrou : l'exécution est-elle
annulée ? la capacité est-elle accordée ? reste-t-il de la place dans le budget d'outils ? cette
signature a-t-elle épuisé ses tentatives ? Ensuite, elle réserve la tentative, et seulement après
exécute le corps, hors du verrou, puis vérifie de nouveau l'annulation. Ici, c'est vous qui écrivez
cette garde, et un vérificateur essaie de la mettre en défaut.

Une garde est une classe dérivée de `GuardBase`. Celle-ci vous fournit les limites et les capacités
accordées (`self.tool_calls`, `self.repetitions`, `self.granted`), `self.admitted` (les tentatives
admises, à partir de 0), `self.seen` (un dict : signature → tentatives admises), `self.lock` (un
`threading.Lock`) et `self.cancelled` (vrai dès que l'exécution est annulée, par exemple parce que
son délai est passé). Vous écrivez `admit(call, body)`. L'objet `call` décrit un appel d'outil :
`call.tool`, `call.capability`, `call.arguments` (après la liaison typée, par exemple
`{"input": 42}`) et `call.raw` (le texte envoyé par le modèle, par exemple `'{"input": 42.0}'`).

- Pour admettre l'appel, réservez la tentative, exécutez `body()` et renvoyez ce qu'il a renvoyé.
- Pour le refuser, renvoyez la raison sans exécuter le corps : `"Cancelled"`, `"PermissionDenied"`,
  `"ToolBudget"` ou `"RepeatedCall"`.

Contrairement au périmètre d'exécution de labkit, un refus n'arrête rien ici : le vérificateur peut
donc continuer à poser des questions. `check_guard(YourGuard)` juge la garde sur ce qu'elle fait, de
deux façons :

1. **Seule.** Des gardes neuves répondent à quelque 170 petits scripts, un appel après l'autre, avec
   des limites et des capacités accordées variées, et des corps qui réussissent, échouent ou voient
   l'exécution annulée. Chaque réponse est comparée aux **règles** : la garde de labkit, énoncée
   pour un appel à la fois.
2. **En concurrence.** Deux threads, **A** et **B**, appellent `admit` au même moment. Le
   vérificateur ne laisse tourner qu'un thread à la fois et peut passer à l'autre à chaque lecture
   ou écriture de l'état de la garde et à chaque opération sur le verrou. Un choix de ces
   basculements est un **ordonnancement** ; basculer alors que le thread en cours aurait pu
   continuer est une **préemption**. Le vérificateur essaie tous les ordonnancements comptant au plus
   deux préemptions (la plupart des vraies situations de concurrence n'en demandent pas plus), et un
   ordonnancement passe si les deux appels, faits l'un après l'autre dans un certain ordre, auraient
   obtenu les mêmes réponses.

Le rapport d'une garde fausse montre ce qui l'a mise en défaut : l'appel auquel elle a mal répondu
seule, ou le plus court ordonnancement qui la met en défaut, une ligne par tour d'un thread
(`A  takes self.lock · reads admitted = 1` ; `admitted = 2` est une écriture), puis le **pourquoi**.
`pause()` marque un moment, entre deux étapes, où une vraie garde ferait autre chose (écrire une ligne
de journal, lire une base de données). C'est un endroit de plus où le vérificateur peut basculer ; il
ne décide jamais d'un verdict.

### Première garde fausse : deux étapes sous verrou"""
FR["two-steps-predict"] = """Chaque ligne qui lit ou modifie le compteur tient le verrou. Pensez à la course pour la dernière place
du budget : avec `tool_calls=2`, une tentative est déjà admise, puis A et B demandent chacun un ticket
différent au même moment. **Prédisez :** avec combien de préemptions au minimum peut-on mettre cette
garde en défaut (0, 1 ou 2) ? Et dans cet ordonnancement, combien des deux corps s'exécutent ?"""
FR["two-steps-guess#hint"] = """Sans préemption, un thread tourne jusqu'à ce qu'il se termine ou attende le verrou, puis l'autre prend la main : les deux peuvent-ils passer la vérification de cette façon ? Où B devrait-il s'exécuter, au milieu de l'`admit` de A, pour que les deux vérifications voient encore une place libre ?"""
FR["two-steps-read"] = """Un seul basculement suffit, juste après les vérifications de A : B exécute ses deux étapes pendant que
A attend entre les siennes, puis A réserve une place qui n'existe plus. Chaque ligne tenait le verrou,
et pourtant la garde est fausse : le verrou protège chaque étape, pas l'intervalle entre elles. Ce
qu'une vérification a lu ne reste vrai que tant que personne d'autre ne peut le modifier : la
vérification et la réservation doivent donc former une seule étape sous verrou. Sans préemption, tous
les ordonnancements passent ; voilà pourquoi un test qui se contente de lancer des threads « en même
temps » laisse passer cette garde la plupart du temps.

### Deuxième garde fausse : un corps qui échoue rend sa place

Cette garde vérifie et réserve en une seule étape sous verrou. Mais quand un corps échoue, elle rend
la tentative, ce qui paraît juste : l'outil n'a rien fait."""
FR["refund-predict"] = """**Prédisez :** le vérificateur a-t-il besoin de deux threads pour prendre cette garde en défaut, ou des
appels faits l'un après l'autre suffisent-ils déjà à le montrer ? Répondez `"alone"` (seule) ou
`"race"` (en concurrence)."""
FR["refund-guess#hint"] = """Demandez-vous où l'erreur se manifeste : `RefundGuard` a-t-elle besoin de deux threads simultanés pour répondre autrement que les règles, ou un appel après l'autre suffit-il ?"""
FR["refund-read"] = """Pas besoin d'un second thread : il suffit d'un corps qui échoue et d'un appel de plus pour le montrer.
Le vérificateur nomme l'erreur à partir des seules réponses : parmi les erreurs qu'il connaît, il ne
nomme que celles qui donnent chacune des réponses de votre garde, et si aucune ne convient, il montre
le premier appel faux tel qu'il s'est déroulé. Une tentative compte dès qu'elle est admise, quoi que
fasse son corps (docs/guarantees.md) : sinon, un modèle dont les appels échouent toujours
n'épuiserait jamais son budget.

### Votre garde

Écrivez maintenant la garde que le vérificateur ne peut pas mettre en défaut. Tout ce dont elle a
besoin se trouve plus haut : les quatre refus, `self.seen` avec `labkit.signature(call.tool,
call.arguments)` comme clé (chapitre 5), et l'ordre des vérifications du chapitre 4."""
FR["guard#hint"] = """Quelles étapes aucun autre thread ne doit-il voir à moitié faites ? Placez exactement celles-là sous un seul `with self.lock:`, dans l'ordre du chapitre 4 ; le corps vient après la réservation, hors du verrou, et l'exécution a pu être annulée pendant qu'il tournait."""
FR["guard-read"] = """Comparez avec la garde de labkit : `ExecutionScope._admit`, dans `labkit/core/scope.py`, prend un seul
verrou pour la vérification de l'annulation, les règles (`GUARD_RULES`, dans cet ordre) et la
réservation, enregistre aussi l'événement `ToolCall` sous ce verrou, et exécute le corps après, hors
du verrou. Une différence : là-bas, le premier refus arrête aussi l'exécution.

## Score"""
FR["explore"] = """## Explorer

Choisissez un scénario dans le panneau et cherchez le plus petit changement de limites qui le fait
passer dans une autre case de la grille : `complete` vers `ModelBudget`, `changing` vers
`RepeatedCall`… Quelles cases aucun curseur ne permet-il d'atteindre, et pourquoi ?"""
FR["questions"] = """## Questions

**1.** Quel est le plus petit changement qui transforme votre case `ToolBudget` en `RepeatedCall` ?
En `PermissionDenied` ? Quelle règle décide dans chaque cas ?

<details><summary>Réponse</summary>

Rendez deux appels identiques (le second, `read_ticket(2)`, devient `read_ticket(1)`) : la règle de
répétition le refuse alors que le budget a encore de la place. Ou retirez `ticket.read` de `grant` :
la permission est vérifiée en premier, donc le premier appel est refusé et aucune tentative n'est
admise. Quand deux règles pourraient refuser un même appel, c'est la première dans l'ordre de la
garde qui donne son nom à l'arrêt (chapitre 4).

</details>

**2.** Prenez le script poli `[read_ticket(42), finish_review(42), "Review finished."]`. Quelles cases
peut-il remplir, sans modification, avec seulement d'autres capacités accordées ou d'autres limites ?
Quelles sont les deux qu'il ne peut pas remplir, et pourquoi ?

<details><summary>Réponse</summary>

Six : `Completed` avec les valeurs par défaut, `ModelBudget` avec `model_calls` à 2 ou moins,
`ToolBudget` avec `tool_calls=1` (ou 0), `PermissionDenied` sans l'une des capacités,
`RepeatedCall` avec `repetitions=0` (la signature du premier appel a déjà eu ses zéro tentatives)
et `DeadlineExceeded` avec `deadline_s=0`. Pas `Incomplete` : avec toutes les capacités et assez de
marge, il termine la revue, et tout refus ou toute limite l'arrête avant. Pas
`ProviderUnavailable` : il faut pour cela un transport qui échoue. Le modèle est le même ; ce sont
les capacités accordées et les limites de l'hôte qui décident du statut.

</details>

**3.** Pourquoi aucun choix de limites ou de capacités ne peut-il produire `ProviderUnavailable` ?

<details><summary>Réponse</summary>

Ce n'est pas une règle de l'hôte : c'est le fournisseur qui fait défaut, et l'hôte traduit cette
défaillance en statut. Seule une étape qui n'arrive pas à se connecter (`Fail(ConnectionError(...))`),
ou un fournisseur qui annule sa propre requête alors que personne n'a annulé l'exécution
(`Fail(asyncio.CancelledError(...))`, chapitre 9), le produit ; toute autre exception est une erreur
de programmation, et elle est levée.

</details>

**4.** `TwoStepGuard` passe tous les ordonnancements sans préemption. Pourquoi n'est-ce pas suffisant,
et que représente une préemption dans un vrai programme ?

<details><summary>Réponse</summary>

Une préemption, c'est le système d'exploitation (ou l'interpréteur) qui change de thread à un moment
que vous n'avez pas choisi : après n'importe quelle instruction, pendant une entrée-sortie, pendant
l'écriture d'un journal. En production, avec de nombreuses exécutions, ce mauvais moment finit par
arriver ; un test qui passe « d'habitude » le masque. Le vérificateur provoque ce moment
volontairement, à chaque endroit où il pourrait compter.

</details>

**5.** Pourquoi une garde ne doit-elle pas rendre la tentative d'un corps qui a échoué ? Que ferait à
`RefundGuard` un modèle dont les appels échouent toujours ?

<details><summary>Réponse</summary>

La tentative a été admise : la boucle y a consacré un tour, et le modèle a vu son erreur. Si on la
rend, le budget ne s'épuise jamais pour un modèle dont les appels échouent toujours (avec
`tool_calls=1`, un tel modèle exécute un corps après l'autre) : seuls le budget d'appels modèle ou
le délai arrêteraient alors l'exécution. La réservation tient quoi que fasse le corps
(docs/guarantees.md).

</details>

**6.** Votre `Guard` exécute le corps hors du verrou. Qu'est-ce qui changerait s'il l'exécutait
dedans ? (Le vérificateur accepte les deux.)

<details><summary>Réponse</summary>

Ce serait toujours correct, mais plus lent et plus fragile : chaque appel attendrait la fin du corps
de tous les autres, un corps lent retarderait même les appels qui seront refusés, et un corps qui ne
répond plus bloquerait la garde. labkit exécute le corps hors du verrou et vérifie de nouveau
l'annulation après lui (chapitre 4).

</details>

**7.** Une garde pourrait exécuter le corps d'abord et vérifier ensuite. Le vérificateur aurait-il
besoin d'une situation de concurrence pour la prendre en défaut ? Que montrerait son rapport ?

<details><summary>Réponse</summary>

Pas besoin de concurrence : seul, un appel que les règles refusent exécute déjà son corps, et le
rapport montre cet appel avec la mention « after running its body » et nomme l'erreur : le corps
avant la vérification.

</details>"""
FR["key-points"] = """## Points clés

- Chaque statut a une règle ou une condition qui en décide ; le même modèle poli remplit six cases de
  la grille dès que l'hôte change une capacité accordée ou une limite.
- Quand deux règles pourraient arrêter un appel, l'ordre fixe de la garde donne son nom à l'arrêt :
  la permission, puis le budget d'outils, puis la répétition.
- `ProviderUnavailable` n'est pas une règle de l'hôte mais une défaillance externe qu'il traduit en
  statut ; toute autre erreur dans un script est une erreur de programmation, et elle est levée.
- Une garde n'est juste que si ses vérifications et sa réservation forment une seule étape sous
  verrou, avant le corps : deux étapes sous verrou ne valent pas mieux qu'aucun verrou, et une seule
  préemption le montre.
- Une tentative admise compte, même si son corps échoue.
- Un test de concurrence doit provoquer l'entrelacement : le vérificateur essaie tous les
  ordonnancements jusqu'à deux préemptions au lieu d'espérer tomber sur le mauvais, et il juge ce que
  la garde a fait, non l'endroit où un `pause()` était placé.

**Pour aller plus loin**

- Glissez une erreur dans une copie de votre `Guard` (un `>` à la place d'un `>=`, la signature
  calculée à partir de `call.raw`, deux vérifications interverties) et lisez ce que le vérificateur
  nomme. Il ne nomme une erreur que si elle donne chacune des réponses de votre garde.
- `check_guard(Guard, threads=3)` met trois threads en concurrence (cela prend environ une
  demi-minute). Arrivez-vous à écrire une garde qui passe avec deux threads et échoue avec trois ?
- Lisez `ExecutionScope._admit` et `GUARD_RULES` dans `labkit/core/scope.py`, puis l'ordonnanceur
  du vérificateur dans `labkit/teaching/capstone/explore.py`."""
FR["instructor"] = """## Notes pour l'enseignant

<details><summary>Idées reçues fréquentes et pistes de discussion</summary>

**Idées reçues fréquentes**

- *« Completed veut dire que le modèle a dit qu'il avait fini. »* Un script qui ne fait que du texte
  donne `Incomplete` : la condition hôte, c'est la réussite de `finish_review`.
- *« Se répéter, c'est rappeler le même outil. »* Une signature, c'est le nom de l'outil plus les
  arguments canoniques : `read_ticket(1)`, `(2)`, `(3)` n'est pas une répétition ; `42` et `42.0`,
  si.
- *« Un budget serré donne toujours ToolBudget. »* La permission est vérifiée en premier :
  `tool_calls=0` sur un outil dont la capacité n'est pas accordée se termine en `PermissionDenied`.
- *« DeadlineExceeded demande un outil lent. »* Un seul délai couvre toute l'exécution ; un appel
  modèle qui ne répond jamais suffit.
- *« Si chaque ligne est sous le verrou, c'est sûr. »* `TwoStepGuard` verrouille chaque ligne et
  admet pourtant un appel de trop : le verrou doit couvrir la vérification *et* la réservation d'un
  seul tenant.
- *« Un appel qui a échoué ne devrait pas compter. »* Il a pris un tour de boucle ; le rendre permet
  à un modèle dont tous les appels échouent de continuer indéfiniment.
- *« Ça passait quand je l'ai lancé. »* Le vérificateur est déterministe : il essaie tous les
  ordonnancements dans sa borne, donc une même garde obtient le même verdict à chaque fois.

**Pistes de discussion**

- Comparez deux grilles côte à côte : combien de scripts différents remplissent la même case, et
  qu'ont-ils tous en commun ?
- Lisez à voix haute un ordonnancement qui met la garde en défaut, un tour par personne, chacun
  jouant un thread.
- Où se trouve l'`admit` de labkit ? (`ExecutionScope._admit`.) Que fait-il sous son verrou que
  votre garde ne fait pas (il enregistre l'événement et, en cas de refus, arrête l'exécution) ?
- Chapitre 9 : le compteur d'une garde vit en mémoire. Qu'est-ce qui protégerait une écriture après
  un redémarrage ?

Le travail en binôme fonctionne bien : l'un écrit la case ou la garde, l'autre prédit sa ligne avant
la vérification.

</details>"""
