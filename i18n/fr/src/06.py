FR = {}
FR["74f44949"] = """# Chapitre 6 — Compter les appels et borner le temps

**Durée :** environ 40 minutes.

**Prérequis :** les chapitres 1 à 5 (l'ordre de la garde, ce qu'est un événement `ToolCall`, les
signatures).

Deux limites ne dépendent d'aucun outil : le nombre de fois où l'hôte appelle le modèle, et le temps
que peut prendre l'exécution entière. L'hôte compte les deux, en un seul endroit, avant le travail
qu'elles autorisent.

**Ce que vous saurez faire**

- compter les appels modèle dont un script a besoin, réponse finale comprise, et les comparer à la
  limite d'appels modèle ;
- distinguer le travail qu'une exécution a fait du statut qu'elle reçoit ;
- prédire lequel de deux budgets, ou le délai, se prononce le premier pour un script donné ;
- lire le `count` de chaque événement d'arrêt ;
- expliquer ce que borne, et ce que ne borne pas, un plafond de tokens de sortie par appel."""
FR["57a7be9a"] = """## Les quatre limites

Valeurs par défaut : 6 appels modèle, 4 tentatives d'outil, 1 tentative par signature,
120 secondes. Zéro est une vraie limite (« aucun admis »). Une variante est une copie validée :"""
FR["dd585b26"] = """Une valeur incorrecte est refusée par une seule ligne qui nomme le champ :"""
FR["75c47e47"] = """## Le budget d'appels modèle

Les appels modèle sont comptés par le **client de comptage**, une fine enveloppe autour du client de
chat, par laquelle passe chaque appel modèle. Il consulte le périmètre avant **chaque** tentative de
transport (chaque fois que la boucle envoie une requête au modèle, qu'une réponse revienne ou non) :
le premier appel comme chaque relance après des résultats d'outil, en streaming ou non. Si le budget
est déjà épuisé, l'hôte refuse l'appel avant qu'il soit envoyé, et l'exécution s'arrête sur
`ModelBudget`.

### Prédire : le modèle bien élevé avec deux appels modèle

Ce script se comporte bien : il lit le ticket 42, termine la revue, puis dit qu'il a fini.
Donnez-lui un budget de **deux** appels modèle. Comment l'exécution se termine-t-elle, et combien
d'événements `ToolCall` enregistre-t-elle ?"""
FR["fb002c6a#hint"] = """Le script a besoin d'un appel modèle par étape, phrase finale comprise. Quel est le premier appel que l'hôte refuse, et qu'est-ce qui s'était déjà exécuté à ce moment-là ?"""
FR["ch6-done-but-stopped"] = """Les deux appels d'outil se sont exécutés : la revue *a donc bien été* terminée :"""
FR["ch6-stop-decides"] = """Pourtant, le statut est `ModelBudget` et le texte est retenu. Après `finish_review`, la boucle doit
appeler le modèle une fois de plus pour apprendre qu'il n'a plus rien à demander ; ce troisième
appel a été refusé avant d'être envoyé. La condition hôte n'est lue que lorsque la boucle se termine
d'elle-même : une exécution que l'hôte arrête est rapportée avec son arrêt. Le graphique montre la
règle qui a décidé, les appels modèle, et à côté le troisième appel refusé.

## Le plafond propre de la boucle

La boucle d'agent a aussi son propre plafond d'itérations, fixé à la limite d'appels modèle **plus
un** : 7 avec les six appels modèle par défaut. Ce modèle demande **deux** nouveaux tickets dans
chaque réponse (`read_ticket(1)` et `read_ticket(2)` dans la première, 3 et 4 dans la deuxième, et
ainsi de suite, sur sept réponses) : aucune signature ne se répète donc jamais. Deux hôtes
l'exécutent, tous deux avec les six appels modèle par défaut : l'un autorise **12** tentatives
d'outil, l'autre **11**. Prédisez le statut et le nombre de `ToolCall` de chaque exécution."""
FR["a2bf6df1#hint"] = """Avancez réponse par réponse : chacune coûte un appel modèle et deux tentatives d'outil. Quel compteur refuse le premier : les appels modèle de l'hôte, ses tentatives d'outil ou le plafond de la boucle ?"""
FR["cap-never-first"] = """Six réponses admises apportent douze lectures. Avec 12 tentatives, chaque lecture a été admise
(12 sur 12, rien n'a été refusé : aucune treizième lecture n'a été demandée) et le compteur de
l'hôte a refusé le 7e appel modèle, à la 7e et dernière itération permise de la boucle :
`ModelBudget`, avec le compte 6, celui des appels modèle déjà admis. Avec 11 tentatives, c'est la
douzième lecture, le second appel de la sixième réponse, qui est arrivée la première :
`ToolBudget`, compte 11. Dans les deux cas, l'arrêt a un nom ; avec un plafond fixé à la limite plus
un, le plafond propre de la boucle ne se prononce jamais le premier.

## Un seul délai pour toute l'exécution

Un seul délai couvre toute l'exécution : les appels modèle comme les corps d'outil. Quand il est
dépassé, l'annulation de l'exécution atteint tout ce qui attend, ici un transport.

### Prédire : un modèle qui ne répond plus

Ce modèle lit le ticket 42, puis ne répond jamais à son deuxième appel. Le délai est de 0,2 s.
Prédisez le statut et le nombre de `ToolCall` deux fois : avec les six appels modèle par défaut, et
avec un budget d'**un** appel modèle."""
FR["1b568bc8#hint"] = """Pour chaque budget, parcourez l'exécution appel par appel : quel est le dernier appel que l'hôte admet, et qu'est-ce que l'exécution attend quand les 0,2 s sont écoulées ?"""
FR["c5c59b85"] = """Avec six appels modèle, le deuxième appel a été admis (`ModelCall` 2), envoyé, et n'a jamais reçu de
réponse ; le délai a mis fin à l'exécution. L'événement `DeadlineExceeded` s'appelle `run` et son
compte vaut 1 : les tentatives d'outil admises au moment où le temps s'est écoulé. Avec un seul
appel modèle, le budget a refusé le deuxième appel avant qu'il soit envoyé : rien n'est resté en
suspens, et le délai n'a jamais joué. (Le scénario `deadline` du cours est un modèle qui ne répond
jamais, pas même à son premier appel ; `budget` est le modèle bien élevé avec un seul appel modèle.
Vous trouverez les deux dans le panneau d'exploration ci-dessous.)

La ligne des secondes, dans le panneau de gauche du graphique, donne le temps écoulé face au délai.
Elle varie un peu d'une exécution à l'autre, et c'est pourquoi `counters_frame` laisse le temps de
côté :"""
FR["ch6-at-limit"] = """Aucune ligne n'indique `stopped here`, bien que l'unique signature utilisée ait eu sa seule
tentative : un compteur à sa limite signifie seulement que la prochaine tentative *de ce type*
serait refusée, et aucune tentative de ce type n'est venue. La règle qui a décidé est le délai, que
ce tableau laisse de côté (la ligne des secondes du graphique le montre).
"""
FR["ch6-timeline-intro"] = """La chronologie dessine la même exécution couloir par couloir (modèle, middleware, garde, corps),
chaque événement dans l'ordre, avec l'arrêt en travers des couloirs :"""
FR["ch6-counts"] = """### Ce que dit le compte de chaque événement, jusqu'ici

| type (`kind`) | nom (`name`) | compte (`count`) |
|---|---|---|
| `ModelCall` | `model` | appels modèle admis jusqu'ici, celui-ci compris |
| `ModelBudget` | `model` | appels modèle déjà admis : la limite qui a été atteinte |
| `DeadlineExceeded` | `run` | tentatives d'outil admises au moment où le délai a été dépassé |

Le chapitre 8 complète le tableau pour tous les types."""
FR["24d79210"] = """## Ce qui n'est pas un budget

L'agent demande au fournisseur au plus 800 tokens de sortie par appel. C'est une option du
fournisseur, appliquée appel par appel si le fournisseur la prend en charge. Ce n'est ni un total,
ni un prix, ni un disjoncteur : seules les limites ci-dessus sont appliquées, et ce sont elles que
les tests prouvent. Un délai ne rend pas non plus ce qui a déjà été dépensé et n'annule pas un effet
déjà produit."""
FR["2548f8d7"] = """## Auto-vérification"""
FR["1ef6c7ea"] = """## Explorer

Le panneau d'exploration démarre sur `changing`, le modèle qui demande un nouveau ticket à chaque
appel. Déplacez les curseurs des appels modèle et des tentatives d'outil : pour quelles paires de
limites `ToolBudget` se prononce-t-il le premier, et pour lesquelles `ModelBudget` ? Écrivez la
règle sous la forme d'une seule comparaison entre les deux limites, puis essayez-la sur une paire
que vous n'avez pas encore exécutée. Choisissez ensuite `deadline` et déplacez le curseur du délai.
Le panneau s'exécute exactement avec les limites qu'affichent ses curseurs ; son curseur de délai
monte jusqu'à 5 s (les 120 s par défaut du cours feraient attendre le notebook) : un scénario dont
le délai est plus long démarre donc ici à 5 s.

Enfin, un mystère pour le widget ci-dessous : lisez ses étapes et ses limites, choisissez un statut
et un nombre de `ToolCall`, puis appuyez sur *Run and check*. Deux limites sont égales ici : laquelle
est atteinte la première ?"""
FR["questions"] = """## Questions

**1.** Avec `model_calls=3`, comment se termine le modèle bien élevé ? Pourquoi exactement trois ?

<details><summary>Réponse</summary>

`Completed`, avec 2 événements `ToolCall` et 3 événements `ModelCall`. L'appel 1 demande
`read_ticket(42)`, l'appel 2 `finish_review(42)`, l'appel 3 répond « Review finished. » et ne
demande rien : la boucle se termine donc d'elle-même et la condition hôte est remplie. Avec deux
appels, le troisième est refusé (`ModelBudget`).

</details>

**2.** Pourquoi compter un appel modèle *avant* de l'envoyer plutôt qu'après l'arrivée de la
réponse ?

<details><summary>Réponse</summary>

Parce que la limite sert à borner les requêtes qui partent sur le réseau. Compté avant l'envoi, un
appel qui reste en suspens, échoue ou ne reçoit jamais de réponse consomme quand même le budget, et
aucun appel au-delà de la limite ne quitte jamais l'hôte. Compté après la réponse, un appel en
suspens ne serait pas compté, et un appel de trop serait déjà en route au moment où l'on verrait la
limite.

</details>

**3.** Avec `model_calls=0`, comment se termine l'exécution du modèle bien élevé, et le délai
peut-il jouer un rôle ?

<details><summary>Réponse</summary>

`ModelBudget`, avec 0 événement `ToolCall`. Zéro est une vraie limite : le tout premier appel
modèle est refusé avant d'être envoyé. Rien n'attend jamais sur le réseau : le délai ne peut donc
pas jouer.

</details>

**4.** Le modèle peut produire au plus 800 tokens de sortie par appel. Une exécution peut-elle
quand même en produire plus de 800 ? Combien au maximum, avec les limites par défaut ?

<details><summary>Réponse</summary>

Oui. Le plafond s'applique à chaque appel : avec les six appels modèle par défaut, une exécution
peut produire jusqu'à 6 × 800 = 4 800 tokens de sortie (si tant est que le fournisseur respecte
l'option), sans compter les tokens d'entrée que chaque appel envoie. Seul le budget d'appels modèle
borne le nombre d'appels.

</details>"""
FR["key-points"] = """## Points clés

- Un `ModelCall` est une tentative de transport admise par l'hôte ; le compte couvre le premier
  appel et chaque relance, en streaming ou non.
- Une exécution que l'hôte arrête est rapportée avec son arrêt, même quand le travail a été fait :
  le modèle bien élevé avec deux appels modèle se termine en `ModelBudget` après l'exécution de ses
  deux appels d'outil.
- Le plafond propre de la boucle est fixé un cran au-dessus de la limite d'appels modèle : l'arrêt a
  donc toujours un nom.
- Un seul délai borne toute l'exécution ; un appel que le budget refuse n'est jamais envoyé, il ne
  peut donc pas rester en suspens.
- `ModelBudget` compte les appels modèle admis, `DeadlineExceeded` les tentatives d'outil admises.
- Un plafond de tokens de sortie est une option du fournisseur, appel par appel, pas un budget.

**Pour aller plus loin**

- `labkit run deadline --deadline-s 0.3` dans un terminal, puis `echo $?`.
- `labkit.run("budget", stream=True)` : le streaming change-t-il le compte ?
- Ensuite : le chapitre 7 donne à chaque arrêt son statut et son code de sortie."""
FR["instructor"] = """## Notes pour l'enseignant

<details><summary>Idées reçues fréquentes et pistes de discussion</summary>

**Idées reçues fréquentes**

- « Un `ModelCall` est une réponse utile, et payée. » C'est une tentative sur le réseau, comptée
  *avant* son envoi : un appel qui reste en suspens ou échoue compte quand même.
- « Si `finish_review` a réussi, l'exécution est `Completed`. » Seulement quand la boucle se termine
  d'elle-même. Une exécution que l'hôte arrête est rapportée avec son arrêt, même si le travail a été
  fait.
- « Le `max_iterations` de la boucle est le budget. » Il est fixé un cran au-dessus de la limite
  d'appels modèle, précisément pour ne jamais se prononcer le premier.
- « Le délai arrête le corps de l'outil. » Il arrête l'*exécution* ; ce que devient un corps encore
  en cours quand il est dépassé est la question du chapitre 9.
- « `max_output_tokens` borne le coût. » C'est une option du fournisseur, appel par appel, pas un
  total.

**Pistes de discussion**

- Qu'est-ce qui est pire pour un utilisateur : une exécution arrêtée en `ModelBudget` alors que le
  travail était fait, ou une exécution à qui l'on accorde un appel de plus que son budget « parce
  qu'elle avait presque fini » ?
- Où, dans vos propres systèmes, une limite est-elle comptée *après* le travail qu'elle est censée
  borner ?

</details>"""
